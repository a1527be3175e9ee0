/**
 * A bench's client child process over IPC: request() sends one command and resolves with the
 * child's next message (children answer their commands in order), rejecting on an `error` message
 * or when the child exits first. Shared by ws-fanout and stream-latency.
 */
import type { ChildProcess } from 'node:child_process';


export class ClientProcess<ToChild, FromChild extends { ev: string }> {
  private waiters: ((m: FromChild) => void)[] = [];
  constructor(readonly child: ChildProcess) {
    child.on('message', (m: FromChild) => {
      if (m.ev === 'error') console.error(`client process: ${(m as { message?: string }).message}`);
      this.waiters.shift()?.(m);
    });
  }

  request<T extends FromChild>(msg: ToChild): Promise<T> {
    return new Promise((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`client process exited with ${code}`));
      this.child.once('exit', onExit);
      this.waiters.push((m) => {
        this.child.off('exit', onExit);
        if (m.ev === 'error') reject(new Error((m as { message?: string }).message));
        else resolve(m as T);
      });
      this.child.send(msg as object);
    });
  }
}
