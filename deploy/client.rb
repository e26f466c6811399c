# push-jobs-client's settings for the service (deploy/push-jobs-client.service): copy to /etc/infra/client.rb.

# The server's API and the organization this node belongs to.
chef_server_url "http://infra.example.com:10003/organizations/default"
node_name "web1.example.com"
# The organization's validator key registers the node at its first start; the node's own key is then written to
# the path the unit gives with -k, and the validator key may be removed.
validation_key "/etc/infra/validation.pem"
# The jobs this node runs: job name => command (merged with the node attribute push_jobs.whitelist).
whitelist({
  "uptime" => "uptime",
})
# The client records the jobs it runs here, so that a client started again stops what an earlier one left running:
# in the state folder, which lasts across restarts (the service's /tmp does not).
file_dir "/var/lib/push-jobs-client/files"
