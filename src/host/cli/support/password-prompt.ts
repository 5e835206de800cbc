/** A hidden prompt on a terminal; otherwise the first line of standard input. */
export async function readPassword(): Promise<string> {
  if (!process.stdin.isTTY) {
    let input = '';
    for await (const chunk of process.stdin) input += String(chunk);
    return input.split(/\r?\n/)[0];
  }
  process.stderr.write('Password (at least 12 characters): ');
  return new Promise((resolve) => {
    let password = '';
    process.stdin.setRawMode(true);
    process.stdin.resume();
    process.stdin.setEncoding('utf8');
    const onData = (key: string) => {
      if (key === '\r' || key === '\n' || key === '\u0004') {
        process.stdin.setRawMode(false);
        process.stdin.pause();
        process.stdin.off('data', onData);
        process.stderr.write('\n');
        resolve(password);
      } else if (key === '\u0003') {
        process.exit(130);
      } else if (key === '\u007f') {
        password = password.slice(0, -1);
      } else {
        password += key;
      }
    };
    process.stdin.on('data', onData);
  });
}
