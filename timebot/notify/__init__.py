"""Notification decisions that know no channel: the period, the approval state as read over
GraphQL, who is due a period reminder, which approvers a review request goes to, and the
scheduler that asks the channels (mail's e-mail today) to render and send them; and what makes
sure no review request is lost (`reconcile`, `approval_poller`). They read the process through
`ground`'s Protocols: the runtime (timebot.process) is assembled above them."""
