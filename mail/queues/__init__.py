"""The durable queues: the inbox every way in ends in, the outbox with its worker and
deliverers (the SMTP relay, the Maildir), the bytes of the mail written, and MailParts."""
