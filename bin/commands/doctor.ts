import { CONFIG_OPTION, UsageError, type Command } from './command.js';

/** Check a gateway's config, database and vendors, and say plainly what is wrong. */
export const doctorCommand: Command = {
  name: 'doctor',
  summary: "check the config, the database and migrations, and every vendor's health",
  help: `Usage: svc-gateway doctor [--config FILE] [--timeout MS]

Checks the config (every error with the path of its key), connects to the database and
lists migrations not yet applied, and calls the health check of every vendor instance,
each within --timeout (default 5000 ms). Then lists the capabilities no vendor serves
("unavailable" rows, as GET /v1/discovery reports them) and how to enable each. Prints a
table; changes nothing.

Exit codes: 0 every check passed, 1 a check failed, 2 the config or the flags are wrong.
`,
  options: { ...CONFIG_OPTION, timeout: { type: 'string' } },
  async run(flags) {
    const timeoutMs = flags.timeout === undefined ? 5000 : Number(flags.timeout);
    if (!Number.isInteger(timeoutMs) || timeoutMs <= 0)
      throw new UsageError(`--timeout must be a positive number of milliseconds (got "${flags.timeout}")`);
    const { doctor } = await import('./doctor-checks.js');
    return doctor(flags, timeoutMs);
  },
};
