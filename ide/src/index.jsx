// The GraphQL IDE served at GET /graphql: GraphiQL with its docs (schema) explorer, the
// query-builder explorer plugin and the headers editor open, posting to /graphql.
//
// Signed in (/signin), the IDE uses the browser session: the server puts the session's CSRF
// token in <meta name="timebot-csrf">, sent as the X-Timebot-CSRF header with the cookie.
// Otherwise an `apikey` in Headers authenticates; the schema is fetched again as soon as one
// is entered (no "Error fetching schema" until a manual refetch).
import { createGraphiQLFetcher } from '@graphiql/toolkit';
import { explorerPlugin } from '@graphiql/plugin-explorer';
import { useGraphiQLActions } from '@graphiql/react';
import { GraphiQL } from 'graphiql';
import { useEffect, useRef, useState } from 'react';
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

const csrf = document.querySelector('meta[name="timebot-csrf"]')?.content || '';
const who = document.querySelector('meta[name="timebot-person"]')?.content || '';

const NOT_SIGNED_IN =
  'Not signed in: sign in at /signin (the IDE then uses your session), ' +
  'or put your API key in Headers as {"apikey": "<your key>"}.';

function headerValue(headers, name) {
  if (!headers) return '';
  if (headers instanceof Headers) return headers.get(name) || '';
  const key = Object.keys(headers).find((k) => k.toLowerCase() === name);
  return key ? String(headers[key] || '') : '';
}

async function sessionFetch(input, init = {}) {
  const apikey = headerValue(init.headers, 'apikey').trim();
  if (!apikey && !csrf) {
    // Nothing would authenticate this request: say how to, instead of InvalidKey.
    return new Response(JSON.stringify({ errors: [{ message: NOT_SIGNED_IN }] }), {
      headers: { 'content-type': 'application/json' },
    });
  }
  const headers = new Headers(init.headers || {});
  if (!apikey) headers.delete('apikey');
  if (csrf) headers.set('X-Timebot-CSRF', csrf);
  return fetch(input, { ...init, headers, credentials: 'same-origin' });
}

const fetcher = createGraphiQLFetcher({
  url: new URL('/graphql', window.location.href).href,
  fetch: sessionFetch,
});
const plugins = [explorerPlugin()];

const DEFAULT_QUERY = csrf
  ? `# timebot GraphQL, signed in${who ? ` as ${who}` : ''}: run with the play button
# (Ctrl-Enter). Requests use your browser session; an "apikey" in Headers wins over it.
{
  currentPerson {
    id
    name
    email
  }
}
`
  : `# timebot GraphQL: sign in at /signin, or put your key in Headers below,
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

function apikeyOf(text) {
  try {
    const value = JSON.parse(text || '{}');
    return typeof value?.apikey === 'string' ? value.apikey.trim() : '';
  } catch {
    return '';
  }
}

// Inside GraphiQL's provider: fetch the schema again when the key in Headers changes.
function SchemaFollowsKey({ apikey }) {
  const { introspect } = useGraphiQLActions();
  const seen = useRef(apikey);
  useEffect(() => {
    if (apikey === seen.current) return undefined;
    seen.current = apikey;
    const timer = setTimeout(() => introspect(), 300);
    return () => clearTimeout(timer);
  }, [apikey, introspect]);
  return (
    <span className="timebot-auth">
      {csrf ? `Signed in${who ? ` as ${who}` : ''}` : apikey ? 'Using the API key in Headers' : (
        <a href="/signin">Sign in</a>
      )}
    </span>
  );
}

function App() {
  const [apikey, setApikey] = useState('');
  return (
    <GraphiQL
      fetcher={fetcher}
      plugins={plugins}
      defaultQuery={DEFAULT_QUERY}
      defaultHeaders={csrf ? '{}' : '{\n  "apikey": ""\n}'}
      defaultEditorToolsVisibility="headers"
      isHeadersEditorEnabled
      shouldPersistHeaders
      onEditHeaders={(text) => setApikey(apikeyOf(text))}
    >
      <GraphiQL.Footer>
        <SchemaFollowsKey apikey={apikey} />
      </GraphiQL.Footer>
    </GraphiQL>
  );
}

createRoot(document.getElementById('graphiql')).render(<App />);
