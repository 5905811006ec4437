import type { FastifyInstance } from "fastify";
import type { SharedParts } from "../appParts";
import type { AppContext } from "../context";
import { auditWrites } from "./auditedWrites";
import { auditLogRoutes } from "./auditLog";
import { refuseReadScopeBeforeBody } from "./auth";
import { chainRoutes } from "./chains";
import { contractRoutes } from "./contracts";
import { eventEndpointRoutes } from "./eventEndpoints";
import { fundingRoutes } from "./funding";
import { limitUsageRoutes } from "./limitUsage";
import { managementOf, useManagementSchemas } from "./management";
import { registerManagementDocs } from "./managementDocs";
import { paymasterRoutes } from "./paymasters";
import { policyRoutes } from "./policies";
import { sponsorshipRoutes } from "./sponsorships";
import { tokenRoutes } from "./tokens";
import { webhookRoutes } from "./webhooks";

export const MANAGEMENT_PREFIX = "/api/v2/public/sdk";
/** The interface's path and the public service's, so that scripts written for either work unchanged. */
const PAYMASTER_PATHS = ["paymasterParameters", "paymaster"];

/**
 * The management API under its prefix: its OpenAPI document (registered first, so that it sees every route), the
 * scope's hooks (the read scope refused before the body, each write audited in its transaction) and its routes.
 */
export async function registerManagement(
  app: FastifyInstance,
  ctx: AppContext,
  { setups, chains, contractWatch, alerts, credentials }: SharedParts,
): Promise<void> {
  await registerManagementDocs(app, MANAGEMENT_PREFIX);
  // A change of a paymaster through this instance applies to its next sponsorship and its next management request at
  // once (on PostgreSQL the notification of the change arrives a little after the commit).
  const management = managementOf(
    ctx,
    credentials,
    (apiKey) => {
      setups.invalidate(apiKey);
      credentials.forgetPaymaster(apiKey);
    },
    alerts.settingsChanged,
  );
  await app.register(
    async (api) => {
      useManagementSchemas(api);
      refuseReadScopeBeforeBody(api, credentials);
      auditWrites(api, management.transactions, () => ctx.now());
      for (const path of PAYMASTER_PATHS) paymasterRoutes(api, management, path);
      chainRoutes(api, management, chains, contractWatch);
      fundingRoutes(api, management, PAYMASTER_PATHS);
      contractRoutes(api, management);
      policyRoutes(api, management);
      limitUsageRoutes(api, management);
      webhookRoutes(api, management);
      eventEndpointRoutes(api, management);
      sponsorshipRoutes(api, management);
      tokenRoutes(api, management);
      auditLogRoutes(api, management);
    },
    { prefix: MANAGEMENT_PREFIX },
  );
}
