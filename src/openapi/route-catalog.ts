import { RequestMethod, Type } from '@nestjs/common';
import { HTTP_CODE_METADATA, METHOD_METADATA, PATH_METADATA, ROUTE_ARGS_METADATA } from '@nestjs/common/constants';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum';
import { FASTIFY_ROUTE_CONFIG_METADATA } from '@nestjs/platform-fastify/constants';
import { API_OPERATION_METADATA, OperationSpec } from '../common/api-docs';
import { DtoValidationPipe } from '../common/dto-validation.pipe';
import { IntQueryPipe } from '../common/int-query.pipe';
import { ServiceRouteOptions } from '../common/route-options';

/** A query parameter read by name (`@Query('name', pipe?)`); an IntQueryPipe says its bounds. */
export interface RouteQueryParameter {
  name: string;
  integer?: { min: number; max: number; default?: number };
}

/**
 * One route as Nest registers it, read from the decorators' metadata: the same facts the router,
 * the pipes and the Fastify hooks act on, so the document cannot describe a route that is not there.
 */
export interface RouteInfo {
  method: 'get' | 'post' | 'put' | 'delete' | 'patch';
  /** OpenAPI form: `/projections/{id}/state/{key}`. */
  path: string;
  /** `ProjectionsController.state` (the operationId). */
  handler: string;
  /** The status Nest answers on success (`@HttpCode`, else 201 for POST, 200 otherwise). */
  successStatus: number;
  pathParameters: string[];
  queryParameters: RouteQueryParameter[];
  /** The whole query object goes through a pipe (`@Query(SomePipe)`): its @ApiOperation names its parameters. */
  wholeQuery: boolean;
  headerParameters: string[];
  /** The class-validator DTO its `@Body` is validated with. */
  bodyDto?: Type<object>;
  /** Reads a body without a DTO (`@Body()` alone, or the raw request: multipart uploads). */
  otherBody: boolean;
  options: ServiceRouteOptions;
  /** Its words, answers and errors, written on the handler (@ApiOperation, common/api-docs.ts). */
  operation?: OperationSpec;
}

const METHODS: Partial<Record<RequestMethod, RouteInfo['method']>> = {
  [RequestMethod.GET]: 'get',
  [RequestMethod.POST]: 'post',
  [RequestMethod.PUT]: 'put',
  [RequestMethod.DELETE]: 'delete',
  [RequestMethod.PATCH]: 'patch',
};

interface RouteArg {
  index: number;
  data?: unknown;
  pipes?: unknown[];
}

const asList = (p: string | string[] | undefined): string[] => (Array.isArray(p) ? p : [p ?? '']);

/** `/a/:id/b` → `/a/{id}/b` (Fastify's parameters in OpenAPI's form). */
export function openApiPath(...segments: string[]): string {
  const joined =
    '/' +
    segments
      .map((s) => s.replace(/^\/+|\/+$/g, ''))
      .filter(Boolean)
      .join('/');
  return joined.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

export function routesOf(controller: Type<object>): RouteInfo[] {
  const routes: RouteInfo[] = [];
  const prefixes = asList(Reflect.getMetadata(PATH_METADATA, controller));
  const proto = controller.prototype as Record<string, unknown>;
  for (const name of Object.getOwnPropertyNames(proto)) {
    const handler = proto[name];
    if (name === 'constructor' || typeof handler !== 'function') continue;
    const requestMethod = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined;
    const paths = Reflect.getMetadata(PATH_METADATA, handler) as string | string[] | undefined;
    if (requestMethod === undefined || paths === undefined) continue;
    const method = METHODS[requestMethod];
    if (!method)
      throw new Error(`${controller.name}.${name}: method ${RequestMethod[requestMethod]} is not described by the OpenAPI document`);
    const args = Object.entries((Reflect.getMetadata(ROUTE_ARGS_METADATA, controller, name) ?? {}) as Record<string, RouteArg>);
    const argsOf = (type: RouteParamtypes) => args.filter(([key]) => key.split(':')[0] === String(type)).map(([, a]) => a);
    const queries = argsOf(RouteParamtypes.QUERY);
    const bodies = argsOf(RouteParamtypes.BODY);
    const dtoPipe = bodies.flatMap((b) => b.pipes ?? []).find((p): p is DtoValidationPipe<object> => p instanceof DtoValidationPipe);
    for (const prefix of prefixes) {
      for (const p of asList(paths)) {
        const path = openApiPath(prefix, p);
        routes.push({
          method,
          path,
          handler: `${controller.name}.${name}`,
          successStatus: (Reflect.getMetadata(HTTP_CODE_METADATA, handler) as number | undefined) ?? (method === 'post' ? 201 : 200),
          pathParameters: [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]),
          queryParameters: queries.filter((q) => typeof q.data === 'string').map((q) => queryParameter(q)),
          wholeQuery: queries.some((q) => q.data === undefined),
          headerParameters: argsOf(RouteParamtypes.HEADERS)
            .map((h) => h.data)
            .filter((d): d is string => typeof d === 'string'),
          ...(dtoPipe ? { bodyDto: dtoPipe.dto as Type<object> } : {}),
          otherBody: !dtoPipe && (bodies.length > 0 || argsOf(RouteParamtypes.REQUEST).length > 0) && method !== 'get',
          options: (Reflect.getMetadata(FASTIFY_ROUTE_CONFIG_METADATA, handler) ?? {}) as ServiceRouteOptions,
          operation: Reflect.getMetadata(API_OPERATION_METADATA, handler) as OperationSpec | undefined,
        });
      }
    }
  }
  return routes;
}

function queryParameter(arg: RouteArg): RouteQueryParameter {
  const int = (arg.pipes ?? []).find((p): p is IntQueryPipe<number | undefined> => p instanceof IntQueryPipe);
  if (!int) return { name: arg.data as string };
  return {
    name: arg.data as string,
    integer: { min: int.min, max: int.max, ...(int.whenAbsent !== undefined ? { default: int.whenAbsent } : {}) },
  };
}
