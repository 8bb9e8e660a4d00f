#!/bin/sh
# Starts OpenDKIM and OpenDMARC, then Postfix in the foreground, with the names from the
# environment (deploy/compose.yaml sets them):
#   MTA_HOSTNAME        the MTA's name, also both milters' AuthservID (timebot's
#                       TIMEBOT_MAIL_TRUSTED_AUTHSERV_IDS)
#   MAIL_DOMAIN         the bot's mail domain (timebot's TIMEBOT_MAIL_DOMAIN)
#   TIMEBOT_LMTP        where timebot listens for LMTP, host:port
#   RELAY_NETWORKS      who may relay out through port 587 (timebot's address)
set -eu
: "${MTA_HOSTNAME:?set MTA_HOSTNAME}" "${MAIL_DOMAIN:?set MAIL_DOMAIN}"
: "${TIMEBOT_LMTP:?set TIMEBOT_LMTP (host:port)}" "${RELAY_NETWORKS:?set RELAY_NETWORKS}"
for conf in /etc/opendkim.conf /etc/opendmarc.conf; do
  sed -i "s/mx\.example\.com/$MTA_HOSTNAME/g" "$conf"
done
printf '%s   lmtp:[%s]:%s\n' "$MAIL_DOMAIN" "${TIMEBOT_LMTP%:*}" "${TIMEBOT_LMTP##*:}" \
  > /etc/postfix/transport
postconf -e "myhostname=$MTA_HOSTNAME" "relay_domains=$MAIL_DOMAIN" \
  "mynetworks=127.0.0.0/8 $RELAY_NETWORKS" "maillog_file=/dev/stdout"
mkdir -p /run/opendkim /run/opendmarc
opendkim -x /etc/opendkim.conf -u opendkim
opendmarc -c /etc/opendmarc.conf -u opendmarc
exec postfix start-fg
