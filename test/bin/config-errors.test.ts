import t from 'tap';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cliEnv, runCli } from './fixtures/cli.js';

// database-independent: config mistakes are refused before a database is opened.

// Config mistakes a newcomer makes, as `serve` and `doctor` report them: the same file gets
// the same verdict and the same words from both (they load it through one function).
const CASES: Array<{ name: string; yaml: string; says: RegExp[] }> = [
  {
    name: 'a union value outside its literals, and a misspelt key',
    yaml: 'log:\n  level: verbose\nserver:\n  prot: 8080\n',
    says: [
      /log\.level: must be one of fatal, error, warn, info, debug, trace, silent \(got "verbose"\)/,
      /server\.prot: is not a known key; did you mean "port"\?/,
    ],
  },
  {
    name: 'vendors written as a map',
    yaml: 'vendors:\n  openai:\n    api_key: sk-test\n',
    says: [
      /vendors: is a list of vendor instances, not a map/,
      / {4}- \{ id: openai, use: openai, config: \{ \.\.\. \} \}/,
    ],
  },
  {
    name: 'a misspelt vendor adapter',
    yaml: 'vendors:\n  - id: oa\n    use: opnai\n    config: {}\n',
    says: [/vendors\[0\]\.use: unknown vendor adapter "opnai"\. Did you mean "openai"\?/],
  },
  {
    name: 'a misspelt built-in area',
    yaml: 'plugins:\n  storge: {}\n',
    says: [/plugins\.storge: no area "storge"\. Did you mean "storage"\?/],
  },
  {
    name: 'a misspelt key inside an area',
    yaml: 'plugins:\n  storage:\n    max_objct_bytes: 5\n',
    says: [/plugins\.storage\.max_objct_bytes: is not a known key; did you mean "max_object_bytes"\?/],
  },
];

t.test(
  'serve and doctor: exit 2 with the same message, which names the allowed values or the likely key',
  async (t) => {
    const { env: base, home } = await cliEnv(t);
    const env = { ...base, SVC_LOG_LEVEL: '' }; // else it would replace the file's log.level
    for (const [i, c] of CASES.entries()) {
      const file = join(home, `case-${i}.yaml`);
      writeFileSync(file, c.yaml);
      const [serve, doctor] = await Promise.all([
        runCli(['serve', '--config', file, '--port', '0'], { env }),
        runCli(['doctor', '--config', file], { env }),
      ]);
      t.equal(serve.code, 2, `${c.name}: serve exits 2 (${serve.stderr})`);
      t.equal(doctor.code, 2, `${c.name}: doctor exits 2`);
      for (const re of c.says) {
        t.match(serve.stderr, re, `${c.name}: serve says it`);
        t.match(doctor.stderr, re, `${c.name}: doctor says it`);
      }
      t.notMatch(serve.stderr, /npm install/, `${c.name}: no "npm install <typo>"`);
    }
  }
);
