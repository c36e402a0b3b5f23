import { Cron } from 'croner';
import { badField } from './common.js';

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
    throw badField(
      'timezone',
      `timezone "${timezone}" is not an IANA time zone name (like UTC or Europe/Berlin).`,
      'is not an IANA time zone'
    );
  let cron: Cron;
  try {
    cron = new Cron(schedule, { paused: true, timezone });
  } catch (e) {
    const why = (e as Error).message.replace(/^CronPattern:\s*/, '');
    throw badField(
      'schedule',
      `schedule "${schedule}" is not a valid cron expression: ${why}.`,
      'is not a valid cron expression'
    );
  }
  if (!cron.nextRun()) throw badField('schedule', `schedule "${schedule}" never fires.`, 'never fires');
}

/** The first slot strictly after `after` (epoch ms), or undefined when there is none. */
export function nextSlot(schedule: string, timezone: string, after: number): number | undefined {
  const next = new Cron(schedule, { paused: true, timezone }).nextRun(new Date(after));
  return next ? next.getTime() : undefined;
}
