import { Cron } from 'croner';
import { fieldError } from '../../core/kit/area.js';

/** Whether the runtime knows an IANA zone name (croner itself accepts unknown names silently). */
function knownZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/** Check a schedule and zone; 400 naming the field that is wrong. */
export function checkSchedule(schedule: string, timezone: string): void {
  if (!knownZone(timezone))
    throw fieldError(
      'timezone',
      'is not an IANA time zone',
      `timezone "${timezone}" is not an IANA time zone name (like UTC or Europe/Berlin).`
    );
  let cron: Cron;
  try {
    cron = new Cron(schedule, { paused: true, timezone });
  } catch (e) {
    const why = (e as Error).message.replace(/^CronPattern:\s*/, '');
    throw fieldError(
      'schedule',
      'is not a valid cron expression',
      `schedule "${schedule}" is not a valid cron expression: ${why}.`
    );
  }
  if (!cron.nextRun()) throw fieldError('schedule', 'never fires', `schedule "${schedule}" never fires.`);
}

/** The first slot strictly after `after` (epoch ms), or undefined when there is none. */
export function nextSlot(schedule: string, timezone: string, after: number): number | undefined {
  const next = new Cron(schedule, { paused: true, timezone }).nextRun(new Date(after));
  return next ? next.getTime() : undefined;
}
