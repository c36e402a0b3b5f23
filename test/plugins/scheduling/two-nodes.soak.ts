import t from 'tap';
import { twoNodes } from './two-nodes.js';

// The long run (npm run test:soak, on PostgreSQL): 10,000 messages and a minute of cron.
t.setTimeout(400_000);
twoNodes(t, Number(process.env.SVC_TWO_NODE_MESSAGES ?? 10_000), Number(process.env.SVC_TWO_NODE_CRON_SECONDS ?? 60));
