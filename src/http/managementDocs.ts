import swagger from "@fastify/swagger";
import swaggerUi from "@fastify/swagger-ui";
import type { FastifyInstance } from "fastify";
import { securitySchemes } from "../schemas/management/common";

export interface ManagementRoute {
  method: string;
  url: string;
}

const documentedRoutes = new WeakMap<FastifyInstance, ManagementRoute[]>();

/** Every management route registered on the app, as Fastify saw them (for the check that the document has them all). */
export const managementRoutesOf = (app: FastifyInstance): readonly ManagementRoute[] => documentedRoutes.get(app) ?? [];

const OPENAPI_PATH = "/openapi.json";
const DOCS_PATH = "/docs";

/**
 * The management API described from the same schemas that validate it: `GET /openapi.json` (OpenAPI 3.1) and a page
 * that renders it at `GET /docs`, whose scripts and styles come from the installed package (no CDN: many deployments
 * have no internet). Neither needs credentials. Register before the routes: the description collects them as they are
 * added, and keeps only those under `prefix`.
 */
export async function registerManagementDocs(app: FastifyInstance, prefix: string): Promise<void> {
  const routes: ManagementRoute[] = [];
  documentedRoutes.set(app, routes);
  app.addHook("onRoute", (route) => {
    if (!route.url.startsWith(`${prefix}/`) || route.schema?.hide) return;
    for (const method of [route.method].flat()) if (method !== "HEAD") routes.push({ method, url: route.url });
  });
  await app.register(swagger, {
    openapi: {
      openapi: "3.1.0",
      info: {
        title: "Paymaster service: management API",
        version: "1",
        description:
          "Paymasters, the contracts they sponsor, their rules (spending limits, webhooks, wallet deployment), webhooks " +
          "and funding wallets. Every answer is `{statusCode, message, data?}`; a refusal's message names the field and " +
          "the problem.",
      },
      components: { securitySchemes },
    },
    hideUntagged: false,
    exposeHeadRoutes: false,
    transform: ({ schema, url }) => ({
      schema: url.startsWith(`${prefix}/`) ? schema : { ...schema, hide: true },
      url,
    }),
  });
  await app.register(swaggerUi, {
    routePrefix: DOCS_PATH,
    uiConfig: { docExpansion: "list", deepLinking: false },
    // The page's own assets only; the default policy already allows nothing from elsewhere.
    staticCSP: true,
  });
  app.get(OPENAPI_PATH, { schema: { hide: true } }, async () => app.swagger());
}
