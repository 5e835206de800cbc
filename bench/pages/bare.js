// The ceiling of bench/pages.js: a bare node:http server in its own process (as the service is)
// that reads each POST body and answers with fixed bytes (a page captured from the service).
// IPC: { cmd: 'start', body } -> { port }; { cmd: 'cpu' } -> process.cpuUsage(); { cmd: 'close' }.
/* eslint-disable */
const { serveParent } = require('./child');
const http = require('node:http');

let server;

const handlers = {
  async start({ body }) {
    const bytes = Buffer.from(body, 'utf8');
    server = http.createServer((request, response) => {
      request.resume(); // the body is read and dropped, as a real server reads it
      request.on('end', () => {
        response.writeHead(200, {
          'content-type': 'application/json; charset=utf-8',
          'content-length': bytes.length,
        });
        response.end(bytes);
      });
    });
    server.keepAliveTimeout = 60_000;
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    return { port: server.address().port };
  },
  async close() {
    server?.closeAllConnections();
    server?.close();
    setImmediate(() => process.exit(0));
    return null;
  },
};

serveParent(handlers);
