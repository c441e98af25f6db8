import { DynamicModule, Type } from '@nestjs/common';
import { MODULE_METADATA } from '@nestjs/common/constants';
import { AppModule } from '../../src/app.module';
import { loadConfig } from '../../src/config/app-config';
import { RouteInfo, routesOf } from '../../src/openapi/route-catalog';

/** Every controller of the app, read from the modules' metadata (nothing is instantiated). */
export function controllersOf(root: Type<object> | DynamicModule, seen = new Set<unknown>()): Type<object>[] {
  const dynamic = (root as DynamicModule).module ? (root as DynamicModule) : undefined;
  const cls = dynamic ? dynamic.module : (root as Type<object>);
  if (seen.has(cls)) return [];
  seen.add(cls);
  const meta = (key: string) => (Reflect.getMetadata(key, cls) ?? []) as unknown[];
  const controllers = [...meta(MODULE_METADATA.CONTROLLERS), ...(dynamic?.controllers ?? [])] as Type<object>[];
  const imports = [...meta(MODULE_METADATA.IMPORTS), ...(dynamic?.imports ?? [])] as (Type<object> | DynamicModule)[];
  return [...controllers, ...imports.filter(Boolean).flatMap((m) => controllersOf(m, seen))];
}

/** Every route of the app as the route catalog reads it, with the default configuration (metrics on). */
export function appRoutes(): RouteInfo[] {
  return controllersOf(AppModule.forRoot(loadConfig({ DATA_DIR: '/nonexistent' }))).flatMap(routesOf);
}
