/* eslint-disable */
// The child side of bench/pages.js's IPC: answers { id, cmd, ...args } messages with the named
// handler's result, and exits when the parent goes away (rather than keep a port and a core).
function serveParent(handlers) {
  process.on('disconnect', () => process.exit(1));
  process.on('message', ({ id, cmd, ...args }) => {
    handlers[cmd](args).then(
      (result) => process.send({ id, ok: true, result }),
      (error) => process.send({ id, ok: false, error: String(error?.stack ?? error) }),
    );
  });
}

module.exports = { serveParent };
