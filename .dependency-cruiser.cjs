// Import rules of the shipped code (src/ and actors/): no cycles, and dependencies that point one way
// (lib <- protocol, push, auth, config, store, api <- actors <- http, transport <- server, bin; metrics reads the rest
// through ports server.ts gives it). `npm run lint` checks them.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'A cycle means two modules cannot be understood, tested or moved apart.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'lib-is-a-leaf',
      severity: 'error',
      comment: 'src/lib holds small utilities with no domain logic.',
      from: { path: '^src/lib/' },
      to: { path: '^(src|actors)/', pathNot: '^src/lib/' },
    },
    {
      name: 'foundations-stay-below-the-actors',
      severity: 'error',
      comment:
        'The wire, job states, auth, config, store, cluster and API shapes know nothing of the actors, the HTTP facade or the transport.',
      from: { path: '^src/(protocol|push|auth|config|store|api|search|cluster)/' },
      to: { path: '^(actors/|src/(http|transport|metrics|bin|cli|client|setup|server\\.ts|wiring/))' },
    },
    {
      name: 'actors-below-the-facades',
      severity: 'error',
      comment: 'Actors receive ports; they never reach for the HTTP facade, the transport or the executables.',
      from: { path: '^actors/' },
      to: { path: '^src/(http|transport|metrics|bin|cli|client|setup|server\\.ts|wiring/)' },
    },
    {
      name: 'metrics-read-through-ports',
      severity: 'error',
      comment: 'The metrics read the actors, transport and store only through what server.ts hands them at start.',
      from: { path: '^src/metrics/' },
      to: { path: '^(actors/|src/(http|transport|store|bin|cli|client|setup|server\\.ts|wiring/))' },
    },
    {
      name: 'push-actors-know-no-organization',
      severity: 'error',
      comment:
        'Job actors and node followers serve an organization through their ports, so they can live in another process.',
      from: { path: '^actors/push/' },
      to: { path: '^actors/(org|users)/' },
    },
    {
      name: 'tools-stay-clients',
      severity: 'error',
      comment: 'cli, infra-server-ctl, push-jobs-client and infra-loadtest talk to a server only through its API.',
      from: { path: '^src/(cli|client|loadtest)/' },
      to: { path: '^(actors/|src/(http|store|transport|metrics|setup|server\\.ts|wiring/))' },
    },
    {
      name: 'no-unresolvable',
      severity: 'error',
      comment: "Packages' type-only subpaths (hono/utils/...) are left to the compiler.",
      from: {},
      to: { couldNotResolve: true, pathNot: '^hono/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.tsx', '.js'] },
  },
};
