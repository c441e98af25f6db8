import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError } from '../common/domain-error';
import { toErrorBody, statusOf } from '../common/error-http-mapping';
import { routeOptionsOf } from '../common/route-options';
import { adminRefusal } from './admin.guard';
import { TenantRequest } from './current-tenant.decorator';
import { TenantDirectory } from './tenant-directory';
import { announcesBody } from '../common/announces-body';
import { scopeCheck } from './scope-check';
import { ApiScope } from './scopes';

type WithKey = { headers: Record<string, string | string[] | undefined>; query?: unknown };

/** The key a request offers: `X-API-Key`, or `?apiKey=` where the route allows it. */
export function apiKeyOf(req: WithKey, keyInQuery: boolean): string | undefined {
  const header = req.headers['x-api-key'];
  if (header !== undefined) return Array.isArray(header) ? header[0] : header;
  const q = keyInQuery ? (req.query as Record<string, unknown> | undefined)?.apiKey : undefined;
  return typeof q === 'string' ? q : undefined;
}

/**
 * Sets the request's tenant (and key) from its key when the key is valid and holds the route's
 * scope; the refusal otherwise: 401 for no valid key, 403 FORBIDDEN {missingScope} for a key
 * without the scope. The tenant is set only when the request may go on.
 */
export async function authenticateKey(
  directory: TenantDirectory,
  req: TenantRequest,
  apiKey: string | undefined,
  scope?: ApiScope,
): Promise<DomainError | null> {
  const found = await directory.verify(apiKey);
  if (found instanceof DomainError) return found;
  const refusal = scopeCheck(found.key.scopes, scope);
  if (refusal) return refusal;
  req.tenant = found.tenant;
  req.apiKeyHash = found.keyHash;
  req.apiKey = found.key;
  return null;
}

/**
 * Authentication in Fastify's onRequest hook, so that a request without valid credentials is
 * answered before any of its body is read (Nest's guards run only after the body is parsed). Each
 * route says how it authenticates in its route options (`@Public()`, `@AdminApi()`, `@KeyInQuery()`);
 * a route that says nothing needs an API key, holding the route's `@RequiresScope` when it names one.
 */
export class RequestAuth {
  constructor(
    private readonly directory: TenantDirectory,
    private readonly adminToken: string | undefined,
  ) {}

  install(fastify: FastifyInstance): void {
    fastify.addHook('onRequest', async (req, reply) => {
      const refusal = await this.check(req);
      if (refusal) return refuse(req, reply, refusal);
    });
  }

  private async check(req: FastifyRequest): Promise<DomainError | null> {
    // An unknown route needs no body to be answered, nor credentials to be told so.
    if (req.is404) return new DomainError('NOT_FOUND', 'route not found');
    const options = routeOptionsOf(req);
    switch (options.auth ?? 'key') {
      case 'public':
        return null;
      case 'admin':
        return adminRefusal(req.headers.authorization, this.adminToken);
      case 'key':
        return authenticateKey(this.directory, req as TenantRequest, apiKeyOf(req, options.keyInQuery ?? false), options.scope);
    }
  }
}

/** The answer goes out without the body having been read; the connection closes so that it never is. */
function refuse(req: FastifyRequest, reply: FastifyReply, err: DomainError): FastifyReply {
  if (announcesBody(req.headers)) reply.header('connection', 'close');
  return reply.code(statusOf(err.code)).send(toErrorBody(err));
}
