// Search engine cost on 10,000 generated nodes: index build, heap, re-put of one node, and query latency.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { flattenDocument } from '../src/search/flatten.js';
import { SearchIndex } from '../src/search/search-index.js';
import { parseQuery } from '../src/search/query.js';
import { report } from './support.js';

const NODES = 10_000;
const QUERY_MS = 1000;
const PLATFORMS = [
  { platform: 'ubuntu', family: 'debian', versions: ['20.04', '22.04', '24.04'] },
  { platform: 'centos', family: 'rhel', versions: ['7.9.2009', '8.5.2111'] },
  { platform: 'amazon', family: 'amazon', versions: ['2', '2023'] },
  { platform: 'debian', family: 'debian', versions: ['11', '12'] },
];
const ROLES = ['web', 'db', 'cache', 'queue', 'search', 'monitoring', 'base', 'bastion'];
const RECIPES = ['nginx', 'nginx::default', 'postgresql::server', 'redis', 'rabbitmq', 'elasticsearch', 'ntp', 'users'];
const ENVIRONMENTS = ['prod', 'staging', 'dev', 'qa'];
const PACKAGES = [
  'openssl',
  'curl',
  'bash',
  'coreutils',
  'libc6',
  'systemd',
  'openssh-server',
  'python3',
  'git',
  'vim',
];

setFlagsFromString('--expose-gc');
const gc: unknown = runInNewContext('gc');

/** Deterministic generator so runs compare. */
function random(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s + 0x6d2b79f5) | 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function makeNode(i: number, rnd: () => number): Record<string, unknown> {
  const pick = <T>(xs: readonly T[]): T => {
    const x = xs[Math.floor(rnd() * xs.length)];
    if (x === undefined) throw new Error('pick from an empty list');
    return x;
  };
  const os = pick(PLATFORMS);
  const name = `node-${String(i).padStart(5, '0')}.example.com`;
  const ip = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
  const mac = `02:42:${[i >> 8, i & 255, 17, 34].map((n) => (n & 255).toString(16).padStart(2, '0')).join(':')}`;
  const roles = [...new Set([pick(ROLES), pick(ROLES), 'base'])];
  const recipes = [...new Set([pick(RECIPES), pick(RECIPES)])];
  const cpus: Record<string, unknown> = {};
  const cores = 2 + Math.floor(rnd() * 3) * 2;
  for (let c = 0; c < cores; c++) {
    cpus[String(c)] = {
      vendor_id: 'GenuineIntel',
      family: '6',
      model: '85',
      model_name: 'Intel(R) Xeon(R) Platinum 8259CL',
      mhz: String(2500 + Math.floor(rnd() * 600)),
      cache_size: '36608 KB',
      flags: ['fpu', 'vme', 'sse', 'sse2', 'avx', 'avx2'],
    };
  }
  const packages: Record<string, unknown> = {};
  for (const p of PACKAGES)
    packages[p] = {
      version: `${1 + Math.floor(rnd() * 3)}.${Math.floor(rnd() * 20)}.${Math.floor(rnd() * 9)}`,
      arch: 'amd64',
    };
  return {
    name,
    chef_environment: pick(ENVIRONMENTS),
    run_list: [...roles.map((r) => `role[${r}]`), ...recipes.map((r) => `recipe[${r}]`)],
    normal: {
      tags: rnd() < 0.3 ? ['canary'] : [],
      push_jobs: {
        whitelist: { 'chef-client': 'chef-client', uptime: 'uptime', restart_nginx: 'sudo systemctl restart nginx' },
      },
    },
    default: { nginx: { worker_processes: 4, port: 80 }, ntp: { servers: ['0.pool.ntp.org', '1.pool.ntp.org'] } },
    override: { nginx: { worker_processes: cores } },
    automatic: {
      hostname: name.split('.')[0],
      fqdn: name,
      domain: 'example.com',
      machinename: name.split('.')[0],
      ipaddress: ip,
      macaddress: mac,
      ip6address: `fe80::42:${i.toString(16)}`,
      platform: os.platform,
      platform_family: os.family,
      platform_version: pick(os.versions),
      os: 'linux',
      os_version: `5.${4 + Math.floor(rnd() * 12)}.0-${Math.floor(rnd() * 200)}-generic`,
      kernel: {
        name: 'Linux',
        release: `5.15.0-${Math.floor(rnd() * 100)}-generic`,
        version: '#1 SMP',
        machine: 'x86_64',
        processor: 'x86_64',
        os: 'GNU/Linux',
        modules: {
          ext4: { size: '917504', refcount: '2' },
          xfs: { size: '1552384', refcount: '0' },
          nf_conntrack: { size: '172032', refcount: '3' },
        },
      },
      network: {
        default_interface: 'eth0',
        default_gateway: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.1`,
        interfaces: {
          lo: {
            mtu: '65536',
            flags: ['LOOPBACK', 'UP'],
            encapsulation: 'Loopback',
            addresses: { '127.0.0.1': { family: 'inet', prefixlen: '8', netmask: '255.0.0.0', scope: 'Node' } },
            state: 'unknown',
          },
          eth0: {
            type: 'eth',
            number: '0',
            mtu: '9001',
            flags: ['BROADCAST', 'MULTICAST', 'UP'],
            encapsulation: 'Ethernet',
            addresses: {
              [ip]: {
                family: 'inet',
                prefixlen: '24',
                netmask: '255.255.255.0',
                broadcast: '10.0.0.255',
                scope: 'Global',
              },
              [mac]: { family: 'lladdr' },
            },
            state: 'up',
            arp: { [`10.0.0.${i % 250}`]: mac },
          },
        },
      },
      cpu: { ...cpus, total: cores, real: 1, cores },
      memory: {
        total: `${8 * 1024 * 1024 * (1 + Math.floor(rnd() * 4))}kB`,
        free: `${Math.floor(rnd() * 4_000_000)}kB`,
        buffers: `${Math.floor(rnd() * 400_000)}kB`,
        cached: `${Math.floor(rnd() * 2_000_000)}kB`,
        swap: { total: '0kB', free: '0kB', cached: '0kB' },
      },
      filesystem: {
        '/dev/nvme0n1p1': {
          kb_size: '101430960',
          kb_used: String(Math.floor(rnd() * 90_000_000)),
          kb_available: String(Math.floor(rnd() * 90_000_000)),
          percent_used: `${Math.floor(rnd() * 100)}%`,
          mount: '/',
          fs_type: 'ext4',
          mount_options: ['rw', 'relatime', 'discard'],
        },
        tmpfs: { kb_size: '3995452', mount: '/dev/shm', fs_type: 'tmpfs', mount_options: ['rw', 'nosuid', 'nodev'] },
      },
      languages: {
        ruby: {
          version: '3.1.4',
          platform: 'x86_64-linux',
          release: '2023-03-30',
          host_cpu: 'x86_64',
          bin_dir: '/opt/chef/embedded/bin',
          gems_dir: '/opt/chef/embedded/lib/ruby/gems/3.1.0',
          ruby_bin: '/opt/chef/embedded/bin/ruby',
          gem_bin: '/opt/chef/embedded/bin/gem',
        },
        python: { version: pick(['3.8.10', '3.10.12', '3.12.3']), builddate: 'Nov 22 2023' },
        perl: { version: '5.34.0', archname: 'x86_64-linux-gnu-thread-multi' },
      },
      dmi: {
        system: {
          manufacturer: 'Amazon EC2',
          product_name: pick(['m5.large', 'm5.xlarge', 'c5.2xlarge', 'r5.large']),
          serial_number: `ec2${i.toString(16).padStart(8, '0')}`,
          uuid: `ec2${i.toString(16).padStart(5, '0')}-1234-5678-9abc-def012345678`,
        },
        bios: { vendor: 'Amazon EC2', version: '1.0', release_date: '10/16/2017' },
      },
      virtualization: { system: 'kvm', role: 'guest', systems: { kvm: 'guest' } },
      cloud: {
        provider: 'ec2',
        public_ipv4: `54.${(i >> 8) & 255}.${i & 255}.${Math.floor(rnd() * 255)}`,
        local_ipv4: ip,
        public_hostname: `ec2-${i}.compute.amazonaws.com`,
        local_hostname: `ip-${ip.replace(/\./g, '-')}.ec2.internal`,
      },
      ec2: {
        instance_id: `i-${(0x1000000 + i).toString(16)}abcdef`,
        instance_type: 'm5.large',
        ami_id: pick(['ami-0abc', 'ami-0def', 'ami-0123']),
        placement_availability_zone: pick(['us-east-1a', 'us-east-1b', 'us-east-1c']),
        security_groups: ['default', pick(ROLES)],
      },
      chef_packages: {
        chef: {
          version: pick(['17.10.3', '18.2.7', '18.4.12']),
          chef_root: '/opt/chef/embedded/lib/ruby/gems/3.1.0/gems/chef-18',
        },
        ohai: { version: '18.1.4', ohai_root: '/opt/chef/embedded/lib/ruby/gems/3.1.0/gems/ohai-18' },
      },
      packages,
      uptime_seconds: Math.floor(rnd() * 9_000_000),
      uptime: `${Math.floor(rnd() * 100)} days`,
      idletime_seconds: Math.floor(rnd() * 9_000_000),
      ohai_time: 1_700_000_000 + rnd() * 1_000_000,
      current_user: 'root',
      init_package: 'systemd',
      root_group: 'root',
      roles,
      recipes,
      expanded_run_list: recipes,
    },
  };
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

function heapMb(): number {
  if (typeof gc !== 'function') throw new Error('gc is not exposed');
  gc();
  gc();
  return process.memoryUsage().heapUsed / 1024 / 1024;
}

const rnd = random(42);
const heapBefore = heapMb();
const index = new SearchIndex();
let flattenMs = 0;
let putMs = 0;
let fieldCount = 0;
let valueCount = 0;
for (let i = 0; i < NODES; i++) {
  const node = makeNode(i, rnd);
  const t0 = performance.now();
  const fields = flattenDocument('node', node);
  const t1 = performance.now();
  index.put(String(node.name), fields);
  putMs += performance.now() - t1;
  flattenMs += t1 - t0;
  fieldCount += fields.size;
  for (const values of fields.values()) valueCount += values.length;
}
const heapAfter = heapMb();

console.log(
  `${NODES} nodes, ${Math.round(fieldCount / NODES)} fields and ${Math.round(valueCount / NODES)} values per node on average, Node ${process.version}`,
);
console.log('');
console.log('| measure | value |');
console.log('|---|---:|');
console.log(`| flatten all nodes | ${flattenMs.toFixed(0)} ms |`);
console.log(`| put all nodes (index build) | ${putMs.toFixed(0)} ms |`);
console.log(`| heap used by the index | ${(heapAfter - heapBefore).toFixed(1)} MB |`);
console.log(`| heap per node | ${(((heapAfter - heapBefore) * 1024) / NODES).toFixed(1)} KB |`);
report(
  `search index of ${NODES} nodes: build, heap`,
  `${putMs.toFixed(0)} ms; ${(heapAfter - heapBefore).toFixed(1)} MB (${(((heapAfter - heapBefore) * 1024) / NODES).toFixed(1)} KB a node)`,
);

// Two versions of one node, as consecutive chef-client runs would save them (uptime, memory and the like differ).
const versions = [makeNode(1234, random(7)), makeNode(1234, random(8))];
const rePut: number[] = [];
for (let i = 0; i < 1000; i++) {
  const sample = versions[i % 2] ?? {};
  const t0 = performance.now();
  index.put(String(sample.name), flattenDocument('node', sample));
  rePut.push(performance.now() - t0);
}
rePut.sort((a, b) => a - b);
console.log(
  `| re-put one changed node, flatten included (p50 / p99) | ${(percentile(rePut, 50) * 1000).toFixed(0)} µs / ${(percentile(rePut, 99) * 1000).toFixed(0)} µs |`,
);

const QUERIES: { label: string; q: string; start?: number; rows?: number }[] = [
  { label: 'exact term', q: 'ipaddress:10.0.19.77' },
  { label: 'AND of two terms', q: 'role:web AND chef_environment:prod' },
  { label: 'wildcard prefix', q: 'name:node-012*' },
  { label: 'leading wildcard', q: 'fqdn:*99.example.com' },
  { label: 'NOT', q: 'NOT platform:ubuntu' },
  { label: 'numeric range', q: 'uptime_seconds:[1000000 TO 2000000]' },
  { label: 'push jobs whitelist', q: 'push_jobs_whitelist_chef-client:* AND recipe:nginx' },
  { label: '*:*, first page', q: '*:*', rows: 1000 },
  { label: '*:*, page at 9000', q: '*:*', start: 9000, rows: 1000 },
  { label: 'bare term (every field)', q: 'canary' },
];
console.log('');
console.log('| query | matches | p50 | p99 |');
console.log('|---|---:|---:|---:|');
for (const { label, q, start = 0, rows = 1000 } of QUERIES) {
  const times: number[] = [];
  let total = 0;
  const deadline = performance.now() + QUERY_MS;
  while (performance.now() < deadline || times.length < 20) {
    const t0 = performance.now();
    total = index.search(parseQuery(q), { start, rows, filter: () => true }).total;
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  console.log(
    `| ${label}: \`${q}\` | ${total} | ${(percentile(times, 50) * 1000).toFixed(0)} µs | ${(percentile(times, 99) * 1000).toFixed(0)} µs |`,
  );
  report(
    `search over ${NODES} nodes, ${label}: p50 / p99`,
    `${(percentile(times, 50) * 1000).toFixed(0)} / ${(percentile(times, 99) * 1000).toFixed(0)} µs`,
  );
}
