import SQLite from 'better-sqlite3';
import { ConfigError } from '../../config/load.js';
import { createPrivateFile } from '../data-dir.js';

/**
 * One gateway process owns a SQLite database file: the wallet keeps the holds of calls in
 * flight in its memory (core/wallet/memory-holds.ts), which a second gateway on the same file
 * could not see, and both would spend the same money. The owner keeps an exclusive lock on a
 * small SQLite file beside the database (`<file>.lock`, SQLite's own file locking), for as long
 * as it runs; the operating system drops it with the process, however that ends, so a crash
 * leaves no stale lock behind. `migrate` and `doctor` do not take it: they change no balance.
 */
export interface OwnerLock {
  release(): void;
}

export function lockDatabaseFile(file: string): OwnerLock {
  const path = `${file}.lock`;
  createPrivateFile(path);
  // timeout 0: a second owner is refused at once rather than after better-sqlite3's 5 s wait.
  const conn = new SQLite(path, { timeout: 0 });
  try {
    // EXCLUSIVE locking mode keeps the lock of the first write until the connection closes.
    conn.pragma('locking_mode = EXCLUSIVE');
    conn.exec('create table if not exists owner (pid integer not null)');
    conn.prepare('delete from owner').run();
    conn.prepare('insert into owner (pid) values (?)').run(process.pid);
  } catch (e) {
    conn.close();
    if ((e as { code?: string }).code === 'SQLITE_BUSY')
      throw new ConfigError(
        `database.url: ${file} is in use by another gateway (its lock ${path} is held). One process `
          + 'owns a SQLite database: stop the other one, give this one its own data_dir, or use PostgreSQL '
          + 'for several nodes.'
      );
    throw e;
  }
  return { release: () => conn.close() };
}
