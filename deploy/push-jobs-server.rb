# infra-server's settings for the service (deploy/infra-server.service): copy to
# /etc/infra-server/push-jobs-server.rb. Every setting and its default: the settings table of the README.

# The name nodes connect to: it must resolve to this machine on every node.
server_name "infra.example.com"
api_listen_address "0.0.0.0"
api_port 10003
# ZeroMQ: nodes send heartbeats to one port and receive commands on the other.
queue_listen_address "tcp://*"
server_heartbeat_port 10000
command_port 10002
# The service's state folder (StateDirectory=): the file store and the keys written at first start, the
# superuser's that infra-server-ctl signs with and the default organization's validator key.
data_dir "/var/lib/infra-server"
# A Redis for the store instead of the files under data_dir (and for more than one process or machine):
# redis_url "redis://127.0.0.1:6379"
# GET /metrics for Prometheus, on a port of its own:
# metrics_port 9464
