// The config endpoint's body (reference 3): where the node connects (its gateway's channels), the heartbeat
// settings, and its session key encrypted so that only the requester's key pair can read it.
// Built in the actors: it takes the push ports' SessionGrant and PushSettings, which src/api may not import.
import type { PushConfigBody } from '../../src/api/push-jobs.js';
import { parsePublicKey } from '../../src/auth/rsa-keys.js';
import { encryptSessionKey } from '../../src/protocol/signing.js';
import type { PushSettings, SessionGrant } from './ports.js';

export function configBody(
  org: string,
  node: string,
  grant: SessionGrant,
  settings: PushSettings,
  requesterKey: string,
): PushConfigBody {
  const d = grant.gateway;
  return {
    type: 'config',
    host: d.server_name,
    node,
    organization: org,
    push_jobs: {
      heartbeat: {
        heartbeat_addr: d.heartbeat_addr,
        command_addr: d.command_addr,
        interval: settings.heartbeat_interval / 1000,
        offline_threshold: settings.offline_threshold,
        online_threshold: settings.online_threshold,
      },
    },
    curve_public_key: d.curve_public_key,
    encoded_session_key: {
      method: 'hmac_sha256',
      key: encryptSessionKey(grant.key, parsePublicKey(requesterKey) ?? requesterKey),
    },
    lifetime: grant.lifetime,
    incarnation_id: d.incarnation_id,
    max_message_skew: d.max_message_skew,
    max_body_size: d.max_body_size,
    ...(grant.servers.length === 0 ? {} : { server_urls: [...grant.servers] }),
    ...(grant.gatewayServer === undefined ? {} : { gateway_url: grant.gatewayServer }),
  };
}
