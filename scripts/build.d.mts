/** See build.mjs. */
export function distIsFresh(root?: string): boolean;
