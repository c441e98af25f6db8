import { FASTIFY_ROUTE_CONFIG_METADATA } from '@nestjs/platform-fastify/constants';

/**
 * What the service's Fastify hooks need to know about a route before its body is read. Nest's
 * guards run only after the body is parsed, so these ride in Fastify's route config, which an
 * `onRequest` hook can see (`request.routeOptions.config`).
 */
export interface ServiceRouteOptions {
  /** How the route is authenticated, before its body is read: an API key (the default), nothing, or the admin token. */
  auth?: 'key' | 'public' | 'admin';
  /** The API key may also come as `?apiKey=` (streams a browser opens, which cannot set headers). */
  keyInQuery?: boolean;
  /** The scope the API key must hold (src/tenancy/scopes.ts). */
  scope?: 'events:read' | 'events:write' | 'events:erase' | 'state:read' | 'deploy' | 'keys:manage';
  /** Never finishes by itself (a stream): shutdown does not wait for it. */
  longLived?: boolean;
  /** The body's payloads (event data, metadata) are facts: stored as the client wrote them (see json-source-text.ts). */
  exactPayloads?: boolean;
  /** Counted against the tenant's quotas (src/quotas/quota-gate.ts): an append (its events once parsed), or an upload. */
  quota?: 'append' | 'append-batch' | 'upload';
}

/** The options of the route a request matched (empty for an unknown route). */
export function routeOptionsOf(req: { routeOptions?: { config?: unknown } }): ServiceRouteOptions {
  return (req.routeOptions?.config ?? {}) as ServiceRouteOptions;
}

/**
 * Adds to a route's Fastify config rather than replacing it (Nest's `@RouteConfig` replaces), so
 * several of these decorators combine. On a class it applies to every handler, a handler's own
 * setting winning.
 */
export function RouteOptions(options: ServiceRouteOptions): ClassDecorator & MethodDecorator {
  return ((target: object, _key?: string | symbol, descriptor?: PropertyDescriptor) => {
    if (descriptor) {
      merge(descriptor.value, options, false);
      return descriptor;
    }
    const proto = (target as { prototype: object }).prototype;
    for (const name of Object.getOwnPropertyNames(proto)) {
      const handler = Object.getOwnPropertyDescriptor(proto, name)?.value;
      if (name !== 'constructor' && typeof handler === 'function') merge(handler, options, true);
    }
  }) as ClassDecorator & MethodDecorator;
}

function merge(handler: object, options: ServiceRouteOptions, underneath: boolean): void {
  const current = (Reflect.getMetadata(FASTIFY_ROUTE_CONFIG_METADATA, handler) ?? {}) as ServiceRouteOptions;
  Reflect.defineMetadata(FASTIFY_ROUTE_CONFIG_METADATA, underneath ? { ...options, ...current } : { ...current, ...options }, handler);
}

/** A body of facts: its payloads stored as sent, every number with its digits (see exact-json-http.ts). */
export const ExactPayloads = () => RouteOptions({ exactPayloads: true });

/** A stream: shutdown ends it rather than waiting for it. */
export const LongLived = () => RouteOptions({ longLived: true });

/** Counted against the tenant's quotas before its body is read (and an append's events before they are stored). */
export const Quota = (kind: NonNullable<ServiceRouteOptions['quota']>) => RouteOptions({ quota: kind });
