"""What a running process holds (`runtime.Runtime`: settings, clock, the bot's database, the
client, the directory, the events) and the jobs installed on it (`notifications`)."""
