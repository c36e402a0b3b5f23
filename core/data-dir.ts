import { chmodSync, closeSync, mkdirSync, openSync, statSync } from 'node:fs';

// The data dir holds the database, the master key and every stored object: readable by the
// gateway's own user only. Directories are made 0700 and files 0600 where they are created
// (the mode passed at creation, so no moment exists where a file is more open), whatever
// umask the process was started with.

export const PRIVATE_DIR = 0o700;
export const PRIVATE_FILE = 0o600;

/**
 * Create the data dir 0700, or tighten an existing one that others can read or enter.
 * Returns what the start-up log should say: the mode it had when it was too open, and the
 * error when it could not be changed (a directory owned by another user: the gateway still
 * starts, as it did before). Files already inside keep their modes; the directory's own mode
 * is what shuts others out.
 */
export function prepareDataDir(dir: string): { was: string; error?: string } | undefined {
  mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR });
  const mode = statSync(dir).mode & 0o777;
  if ((mode & 0o077) === 0) return undefined;
  try {
    chmodSync(dir, PRIVATE_DIR);
    return { was: mode.toString(8) };
  } catch (e) {
    return { was: mode.toString(8), error: (e as NodeJS.ErrnoException).code ?? String(e) };
  }
}

/**
 * Create a file 0600 if it does not exist yet. For SQLite databases: SQLite creates its file
 * with 0644, and gives the -wal and -shm files the database file's own mode, so creating it
 * first makes all three private.
 */
export function createPrivateFile(file: string): void {
  closeSync(openSync(file, 'a', PRIVATE_FILE));
}
