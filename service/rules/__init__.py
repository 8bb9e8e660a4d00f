"""Pure rules of the service (approval workflow, edit rights, ...)."""
