// Scopes: `*` (all), an area (`storage`), or an area with an access level (`storage:read`).
// A key scope grants a required scope when it is `*`, the same string, or the bare area of it.

const SCOPE = /^(\*|[a-z][a-z0-9_-]*(:[a-z][a-z0-9_-]*)?)$/;

export function isValidScope(s: string): boolean {
  return SCOPE.test(s);
}

export function scopeAllows(granted: readonly string[], required: string | undefined): boolean {
  if (!required) return true;
  const area = required.split(':')[0];
  return granted.some((g) => g === '*' || g === required || g === area);
}
