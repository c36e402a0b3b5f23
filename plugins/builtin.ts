import type { AreaDefinition } from '../core/define.js';
import account from './account/index.js';
import storage from './storage/index.js';

/** Areas that ship with the gateway; each is on unless `plugins.<name>: false`. */
export const builtinAreas: AreaDefinition<any>[] = [account, storage];
