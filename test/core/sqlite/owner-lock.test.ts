import t from 'tap';
import { buildApp } from '../../../core/app.js';
import { makeApp, DIALECT } from '../../helpers/app.js';

// One gateway owns a SQLite file (its wallet keeps holds in memory): a second one on the same
// file is refused at boot, saying why; on PostgreSQL several nodes share one database.
// (A killed owner leaves no lock behind: test/core/node-death.soak.ts restarts on its file.)

t.test('a second gateway on the database: refused on SQLite, welcome on PostgreSQL', async (t) => {
  const first = await makeApp(t);
  if (DIALECT === 'sqlite') {
    await t.rejects(buildApp(first.config), {
      name: 'ConfigError',
      message: /gateway\.db is in use by another gateway .*use PostgreSQL for several nodes/,
    });
    await first.app.close();
  }
  const second = await buildApp(first.config);
  t.teardown(() => second.close());
  await second.ready();
  t.equal((await second.inject({ url: '/healthz' })).statusCode, 200, 'it starts once the file is free');
});
