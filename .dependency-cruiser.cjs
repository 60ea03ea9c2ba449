/**
 * Import rules of docs/layout.md, checked by `npm run lint` (dependency-cruiser).
 * @type {import('dependency-cruiser').IConfiguration}
 */
const DOMAINS = ['platform', 'inventory', 'incident', 'transfer', 'consumer', 'approval'];
// What each shared domain may import besides itself (docs/layout.md, "Layers").
const MAY_IMPORT = {
  platform: [],
  inventory: ['platform'],
  incident: ['platform', 'inventory'],
  transfer: ['platform', 'inventory'],
  consumer: ['platform', 'inventory'],
  approval: ['platform', 'inventory', 'incident'],
};

const layerRules = DOMAINS.map((domain) => {
  const forbidden = DOMAINS.filter((d) => d !== domain && !MAY_IMPORT[domain].includes(d));
  return {
    name: `layer-${domain}`,
    comment: `functions/shared/${domain} may import only ${MAY_IMPORT[domain].join(', ') || 'nothing of the project'} (docs/layout.md)`,
    severity: 'error',
    from: { path: `^functions/shared/${domain}/` },
    to: { path: `^functions/shared/(${forbidden.join('|')})/` },
  };
}).filter((rule) => !rule.to.path.includes('()'));

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'Import cycles make load order and layering unclear.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'no-cross-function',
      comment:
        "A function's folder never imports another function's folder: shared code goes to functions/shared/<domain>/.",
      severity: 'error',
      from: { path: '^functions/(?!shared/)([^/]+)/' },
      to: { path: '^functions/(?!shared/)', pathNot: ['^functions/$1/'] },
    },
    {
      name: 'shared-not-to-functions',
      comment: 'Shared domains never import a function folder.',
      severity: 'error',
      from: { path: '^functions/shared/' },
      to: { path: '^functions/(?!shared/)' },
    },
    {
      name: 'production-not-to-local-or-test',
      comment:
        'Deployed code (functions/, infra/, cli/) never imports the local stack, tests, benchmarks or scripts.',
      severity: 'error',
      from: { path: '^(functions|infra|cli)/' },
      to: { path: '^(local|test|bench|scripts)/' },
    },
    {
      name: 'package-stands-alone',
      comment:
        'A workspace package (packages/<name>/src) imports nothing of the project: other teams install it on its own (docs/layout.md).',
      severity: 'error',
      from: { path: '^packages/[^/]+/src/' },
      to: { path: '^(functions|infra|local|test|bench|scripts|packages/[^/]+/(test|examples))/' },
    },
    {
      name: 'no-sdk-internals',
      comment:
        'Our code calls AWS through the SDK clients, never through SDK internals (signer, XML parser, checksum): they change without notice between SDK releases (docs/bundles.md).',
      severity: 'error',
      from: {},
      to: {
        path: '(^|node_modules/)(@smithy/signature-v4|@aws-sdk/xml-builder|@smithy/core/checksum|@smithy/core/dist-[a-z]+/submodules/checksum)',
      },
    },
    {
      name: 'slack-web-api-in-one-module',
      comment:
        "Slack's Web API is called through @slack/web-api in functions/shared/approval/slack-client.ts only: one client, one retry and deadline policy (docs/slack.md).",
      severity: 'error',
      from: { pathNot: '^functions/shared/approval/slack-client\\.ts$' },
      to: { path: '(^|node_modules/)@slack/(web-api|webhook|bolt)(/|$)' },
    },
    ...layerRules,
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // node_modules stays in the graph as leaves (not followed) so rules can name packages.
    exclude: { path: '(^|/)(cdk\\.out|dist)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.js', '.json'],
    },
  },
};
