// The GraphQL IDE served at GET /graphql: GraphiQL with its docs (schema) explorer, the
// query-builder explorer plugin and the headers editor open, posting to /graphql.
import { createGraphiQLFetcher } from '@graphiql/toolkit';
import { explorerPlugin } from '@graphiql/plugin-explorer';
import { GraphiQL } from 'graphiql';
import { createRoot } from 'react-dom/client';

import 'graphiql/style.css';
import '@graphiql/plugin-explorer/style.css';

// Monaco runs its language services in web workers, bundled beside this script.
const workerUrl = (name) => new URL(`./${name}.worker.js`, import.meta.url);
globalThis.MonacoEnvironment = {
  getWorker(_workerId, label) {
    if (label === 'json') return new Worker(workerUrl('json'));
    if (label === 'graphql') return new Worker(workerUrl('graphql'));
    return new Worker(workerUrl('editor'));
  },
};

const fetcher = createGraphiQLFetcher({ url: new URL('/graphql', window.location.href).href });
const plugins = [explorerPlugin()];

const DEFAULT_QUERY = `# timebot GraphQL: put your key in Headers below,
#   {"apikey": "<your key>"}
# then run with the play button (Ctrl-Enter).
{
  currentPerson {
    id
    name
    email
  }
}
`;

function App() {
  return (
    <GraphiQL
      fetcher={fetcher}
      plugins={plugins}
      defaultQuery={DEFAULT_QUERY}
      defaultHeaders={'{\n  "apikey": ""\n}'}
      defaultEditorToolsVisibility="headers"
      isHeadersEditorEnabled
      shouldPersistHeaders
    />
  );
}

createRoot(document.getElementById('graphiql')).render(<App />);
