import { CAPTCHA_CAPABILITIES, defineArea } from '../../core/kit/area.js';
import { CaptchaConfig } from './config.js';
import { captchaListPrice } from './list-price.js';
import { captchaMigrations } from './migrations.js';
import { registerPublicRoutes } from './public-routes.js';
import { ReplayStore } from './replay.js';
import { registerCaptchaRoutes } from './routes.js';
import { registerSiteKeyRoutes } from './site-key-routes.js';
import { SiteKeyStore } from './site-keys.js';
import { CaptchaVerifier } from './verify.js';

/** Captcha: third-party siteverify (Turnstile, hCaptcha, reCAPTCHA) and the gateway's own ALTCHA proof of work. */
export default defineArea({
  name: 'captcha',
  configSchema: CaptchaConfig,
  capabilities: CAPTCHA_CAPABILITIES,
  migrations: captchaMigrations,
  register(app, ctx) {
    const svc = ctx.svc;
    svc.capabilities.set('captcha.verify', { ...CAPTCHA_CAPABILITIES['captcha.verify'], listPrice: captchaListPrice });
    const keys = new SiteKeyStore(svc.db, svc.masterKey, ctx.config.default_difficulty);
    const replay = new ReplayStore(svc.db);
    // A spent solution is refused until it has expired; past that its row guards nothing.
    svc.retention.add({
      name: 'captcha_spent',
      days: ctx.config.replay_retention_days,
      sweep: (before, limit) => replay.sweep(before, limit),
    });
    registerCaptchaRoutes(app, new CaptchaVerifier(svc, ctx.config, keys, replay), keys);
    registerSiteKeyRoutes(app, keys);
    registerPublicRoutes(app, ctx.config, keys);
  },
});
