import { createServer } from 'node:http';

/**
 * The floor of the memory figures: a bare node:http server answering "Hello", nothing else loaded.
 * Started like every other server of the bench (a child process, banner on stdout).
 */
const server = createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'text/plain' });
  res.end('Hello');
});
server.listen(0, '127.0.0.1', () => {
  const addr = server.address();
  if (addr && typeof addr === 'object') console.log(`listening http://127.0.0.1:${addr.port}`);
});
const stop = () => server.close(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
