import t from 'tap';
import { twoNodes } from './two-nodes.js';

// The short run of the two-node test, in the PostgreSQL suite; the long one is two-nodes.soak.ts.
twoNodes(t, 1_000, 10);
