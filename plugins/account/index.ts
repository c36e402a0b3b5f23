import { defineArea, PAYMENTS_CAPABILITIES } from '../../core/kit/area.js';
import { registerUsageRoutes } from './usage-routes.js';
import { accountMigrations } from './migrations.js';
import { registerActivate } from './activate.js';
import { registerKeyRoutes } from './keys-routes.js';
import { registerSummaryRoutes } from './summary-routes.js';
import { registerTopupRoutes } from './topup-routes.js';
import { registerCheckoutPages } from './checkout-pages.js';
import { registerTopupWebhooks } from './topup-webhooks.js';
import { registerTierRoutes } from './tier-routes.js';
import { registerAdminRoutes } from './admin-routes.js';

/** Account: activation, wallet balance and top-up, project keys, tier upgrade. */
export default defineArea({
  name: 'account',
  migrations: accountMigrations,
  capabilities: PAYMENTS_CAPABILITIES,
  register(app) {
    registerUsageRoutes(app);
    registerActivate(app);
    registerKeyRoutes(app);
    registerSummaryRoutes(app);
    registerTopupRoutes(app);
    registerCheckoutPages(app);
    registerTopupWebhooks(app);
    registerTierRoutes(app);
    // With no admin key the operator's API is not there at all: every /v1/admin/* path (any
    // method) is an unknown route, and discovery and OpenAPI do not list it.
    if (app.svc.config.admin_key) registerAdminRoutes(app);
  },
});
