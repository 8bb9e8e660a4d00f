"""The handlers of inbound mail: an approver's reply (one review or a digest), quick time entry
by mail, an out-of-office auto-reply noted as an absence."""
