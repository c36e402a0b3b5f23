import { Type } from '@sinclair/typebox';

/** `{ ok }`, the answer of every delete and revoke that has nothing else to say. */
export const Ok = Type.Object({ ok: Type.Boolean() });
