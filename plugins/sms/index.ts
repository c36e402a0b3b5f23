import { defineArea, SMS_CAPABILITIES } from '../../core/kit/area.js';
import { registerStatusCallbacks } from './callbacks.js';
import { SmsConfig } from './config.js';
import { smsListPrice } from './list-price.js';
import { smsMigrations } from './migrations.js';
import { OtpStore } from './otp.js';
import { registerOtpRoutes } from './otp-routes.js';
import { registerSmsBox } from './records.js';
import { registerSmsRoutes } from './routes.js';

/** SMS: sends through the outbox (twilio, or the sms-capture sink on a laptop), delivery reports, passcodes. */
export default defineArea({
  name: 'sms',
  configSchema: SmsConfig,
  capabilities: SMS_CAPABILITIES,
  migrations: smsMigrations,
  register(app, ctx) {
    const svc = ctx.svc;
    svc.capabilities.set('sms.send', { ...SMS_CAPABILITIES['sms.send'], listPrice: smsListPrice });
    const { box, wire } = registerSmsBox(svc);
    const otp = new OtpStore(svc, ctx.config);
    // An expired passcode's row limits nothing any more once its send window is over too.
    svc.retention.add({
      name: 'sms_otp',
      days: ctx.config.otp_retention_days,
      sweep: (before, limit) => otp.sweep(before, limit),
    });
    registerSmsRoutes(app, svc, ctx.config, box, wire);
    registerOtpRoutes(app, svc, ctx.config, box, otp);
    registerStatusCallbacks(app, svc, box);
  },
});
