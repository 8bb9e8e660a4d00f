// Builds the offline GraphQL IDE into the directory given as the first argument:
// index.html, graphiql.js (+ .css, fonts) and Monaco's three web workers.
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { build } from 'esbuild';

const here = path.dirname(fileURLToPath(import.meta.url));
const outdir = path.resolve(process.argv[2] ?? path.join(here, 'dist'));

const common = {
  bundle: true,
  minify: true,
  legalComments: 'none',
  logLevel: 'warning',
  define: { 'process.env.NODE_ENV': '"production"' },
  target: ['es2020'],
};

const INDEX_HTML = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>timebot · GraphQL IDE</title>
    <link rel="icon" href="/favicon.ico" type="image/svg+xml" />
    <link rel="stylesheet" href="/graphql-ide/graphiql.css" />
    <style>
      html, body, #graphiql { height: 100%; margin: 0; }
    </style>
  </head>
  <body>
    <div id="graphiql">Loading the GraphQL IDE…</div>
    <script type="module" src="/graphql-ide/graphiql.js"></script>
  </body>
</html>
`;

await rm(outdir, { recursive: true, force: true });
await mkdir(outdir, { recursive: true });
await Promise.all([
  build({
    ...common,
    entryPoints: { graphiql: path.join(here, 'src', 'index.jsx') },
    outdir,
    format: 'esm',
    jsx: 'automatic',
    loader: { '.ttf': 'file', '.woff': 'file', '.woff2': 'file' },
    assetNames: '[name]-[hash]',
  }),
  build({
    ...common,
    entryPoints: {
      'editor.worker': 'monaco-editor/esm/vs/editor/editor.worker.js',
      'json.worker': 'monaco-editor/esm/vs/language/json/json.worker.js',
      'graphql.worker': 'monaco-graphql/esm/graphql.worker.js',
    },
    outdir,
    format: 'iife',
  }),
]);
await writeFile(path.join(outdir, 'index.html'), INDEX_HTML);
console.log(`GraphQL IDE built into ${outdir}`);
