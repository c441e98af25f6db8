import * as path from 'node:path';

/**
 * The reference page: Swagger UI from the swagger-ui-dist package that @nestjs/swagger brings,
 * served by the service itself (no CDN: a machine without internet still reads its API), and no
 * inline script (a Content-Security-Policy in front of the service may forbid those).
 */
export const DOCS_PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Event store API reference</title>
<link rel="stylesheet" href="/docs/swagger-ui.css">
<link rel="icon" type="image/png" href="/docs/favicon-32x32.png">
</head>
<body>
<noscript>The API reference needs JavaScript; the document itself is at <a href="/openapi.json">/openapi.json</a>.</noscript>
<div id="swagger-ui"></div>
<script src="/docs/swagger-ui-bundle.js"></script>
<script src="/docs/docs-init.js"></script>
</body>
</html>
`;

const INIT_SCRIPT = `window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#swagger-ui', deepLinking: true });\n`;

export interface DocsAsset {
  contentType: string;
  /** A file of swagger-ui-dist, or the text itself. */
  file?: string;
  text?: string;
}

/** swagger-ui-dist is @nestjs/swagger's dependency: found from there, wherever npm put it. */
function swaggerUiDir(): string {
  const swagger = path.dirname(require.resolve('@nestjs/swagger/package.json'));
  return path.dirname(require.resolve('swagger-ui-dist/package.json', { paths: [swagger] }));
}

/** The only files /docs/{asset} serves: a fixed list, so no request names a path on disk. */
export function docsAssets(): Record<string, DocsAsset> {
  const dir = swaggerUiDir();
  return {
    'swagger-ui.css': { contentType: 'text/css; charset=utf-8', file: path.join(dir, 'swagger-ui.css') },
    'swagger-ui-bundle.js': { contentType: 'text/javascript; charset=utf-8', file: path.join(dir, 'swagger-ui-bundle.js') },
    'favicon-32x32.png': { contentType: 'image/png', file: path.join(dir, 'favicon-32x32.png') },
    'docs-init.js': { contentType: 'text/javascript; charset=utf-8', text: INIT_SCRIPT },
  };
}
