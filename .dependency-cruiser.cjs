// Layer rules (docs/contributing.md, "Layers and lint"): core below areas (plugins/) and vendor
// adapters (vendors/), which never import each other. `npm run lint` fails on any violation;
// there is no baseline and no path switched off.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'vendors-not-to-plugins',
      comment:
        'A vendor adapter serves a capability contract from core; importing an area puts the ' +
        'adapter above the area that calls it. Move what both need into core/capabilities.',
      severity: 'error',
      from: { path: '^vendors/' },
      to: { path: '^plugins/' },
    },
    {
      name: 'plugins-not-to-vendors',
      comment:
        'An area calls vendors only through router.call(capability); naming a vendor would tie ' +
        'the area to one adapter and bypass selection, failover and the wallet.',
      severity: 'error',
      from: { path: '^plugins/' },
      to: { path: '^vendors/' },
    },
    {
      name: 'core-not-to-plugins-or-vendors',
      comment:
        'Core is what every area and vendor builds on, so it cannot depend on any of them. The ' +
        'two built-in registries are the one way in, and only the plugin loader uses them ' +
        '(rule core-builtin-registries-only-in-loader).',
      severity: 'error',
      from: { path: '^core/' },
      to: { path: '^(plugins|vendors)/', pathNot: '^(plugins|vendors)/builtin\\.ts$' },
    },
    {
      name: 'core-builtin-registries-only-in-loader',
      comment:
        'Built-ins go through the same loading and validation as third-party plugins; a second ' +
        'core importer of a registry would be a second way for areas and vendors to come in.',
      severity: 'error',
      from: { path: '^core/', pathNot: '^core/plugin-loader\\.ts$' },
      to: { path: '^(plugins|vendors)/builtin\\.ts$' },
    },
    {
      name: 'vendors-not-to-fastify',
      comment:
        'Adapters never touch Fastify: they get plain inputs and return plain results, so they ' +
        'run the same under any route, job or third-party host.',
      severity: 'error',
      from: { path: '^vendors/' },
      to: { path: '(^|/)node_modules/(fastify|fastify-plugin|@fastify/[^/]+)/' },
    },
    {
      name: 'vendors-only-through-the-vendor-kit',
      comment:
        'A vendor imports the gateway only through core/kit/vendor.ts (`svc-gateway/vendor`) or ' +
        'core/capabilities/index.ts (`svc-gateway/capabilities`): what a built-in adapter uses is ' +
        'what a third-party package can import, and core behind the kit can move freely.',
      severity: 'error',
      from: { path: '^vendors/' },
      to: { path: '^core/', pathNot: '^core/(kit/vendor|capabilities/index)\\.ts$' },
    },
    {
      name: 'plugins-only-through-the-kits',
      comment:
        'An area imports the gateway only through core/kit/area.ts (`svc-gateway/area`), the ' +
        'vendor kit it re-exports, or core/capabilities/index.ts: what a built-in area uses is ' +
        'what a third-party area package can import.',
      severity: 'error',
      from: { path: '^plugins/' },
      to: { path: '^core/', pathNot: '^core/(kit/(area|vendor)|capabilities/index)\\.ts$' },
    },
    {
      name: 'vendor-kit-not-to-core-internals',
      comment:
        'The vendor kit, and everything it reaches, stays clear of Fastify, pino, the gateway ' +
        'database, the wallet and the HTTP layer (but its pagination helpers): adapters get plain ' +
        'inputs, and a vendor package type-checks without those types.',
      severity: 'error',
      from: { path: '^core/kit/vendor\\.ts$' },
      to: {
        path: '(^|/)node_modules/(fastify|fastify-plugin|@fastify/[^/]+|pino)/|^core/(db|wallet)/|^core/app\\.ts$|^core/http/(?!pagination\\.ts$)',
        reachable: true,
      },
    },
    {
      name: 'no-circular',
      comment:
        'A cycle makes load order decide what is undefined at import time and hides which ' +
        'module is the lower layer. Type-only imports count: they show the same tangle.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'not-to-unresolvable',
      comment:
        'An import the cruiser cannot resolve is invisible to every rule above, so a resolution ' +
        'mistake would pass the layer rules silently.',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(dist|\\.tap)/' },
    // Resolve .js import specifiers to the .ts sources, with tsconfig's module settings, and keep
    // type-only imports (they are erased by tsc but still show a dependency between layers).
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
  },
};
