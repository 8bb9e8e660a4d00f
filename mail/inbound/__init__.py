"""Every way in (SMTP/LMTP listener, IMAP poller), the addresses accepted, the loop guard, the
sender's authentication, and the processor that hands each message to its handler."""
