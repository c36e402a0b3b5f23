// Channel names and the token's allowlist. Names use Pusher's alphabet so the same channel
// serves native and Pusher clients; `private-` and `presence-` name their type as in Pusher.

export const CHANNEL_PATTERN = '^[A-Za-z0-9_\\-=@,.;]{1,164}$';
const NAME = new RegExp(CHANNEL_PATTERN);
/** An allowlist entry: a name, or a prefix followed by `*`. */
export const CHANNEL_GRANT_PATTERN = '^[A-Za-z0-9_\\-=@,.;]{0,164}\\*?$';

export type ChannelType = 'public' | 'private' | 'presence';
export const CHANNEL_TYPES: ChannelType[] = ['public', 'private', 'presence'];

export function isChannelName(s: unknown): s is string {
  return typeof s === 'string' && NAME.test(s);
}

/** The type a name implies by itself: the Pusher prefixes, else public. */
export function typeByPrefix(name: string): ChannelType {
  if (name.startsWith('presence-')) return 'presence';
  if (name.startsWith('private-')) return 'private';
  return 'public';
}

/** Whether a token's allowlist grants `name`: an exact entry, or a `prefix*` entry. */
export function granted(grants: readonly string[], name: string): boolean {
  return grants.some((g) => (g.endsWith('*') ? name.startsWith(g.slice(0, -1)) : g === name));
}
