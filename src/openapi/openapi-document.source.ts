import * as fs from 'node:fs';
import * as path from 'node:path';
import { Injectable, OnApplicationBootstrap, Type } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { DocsAsset, docsAssets } from './docs-page';
import { buildOpenApiDocument } from './openapi-document';
import { routesOf } from './route-catalog';

/** The service's version, from the package.json above this file (src/ or dist/src/). */
function packageVersion(): string {
  for (let dir = __dirname; dir !== path.dirname(dir); dir = path.dirname(dir)) {
    const file = path.join(dir, 'package.json');
    if (fs.existsSync(file)) return (JSON.parse(fs.readFileSync(file, 'utf8')) as { version?: string }).version ?? '0.0.0';
  }
  return '0.0.0';
}

/**
 * Builds the document once, at start, from every controller Nest registered: a table entry
 * missing for a route (or left for a route gone) stops the service at start with the list,
 * like any other mistake in its wiring, rather than serving a document that is not true.
 */
@Injectable()
export class OpenApiDocumentSource implements OnApplicationBootstrap {
  private json?: string;
  readonly assets: Record<string, DocsAsset> = docsAssets();

  constructor(private readonly discovery: DiscoveryService) {}

  onApplicationBootstrap(): void {
    const controllers = this.discovery
      .getControllers()
      .map((w) => w.metatype as Type<object> | null)
      .filter((c): c is Type<object> => !!c);
    this.json = JSON.stringify(buildOpenApiDocument(controllers.flatMap(routesOf), packageVersion()));
  }

  text(): string {
    if (!this.json) this.onApplicationBootstrap();
    return this.json!;
  }
}
