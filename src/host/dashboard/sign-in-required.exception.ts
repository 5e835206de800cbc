/** Nobody is signed in: the controller's filter answers with a redirect or a 401 envelope. */
export class SignInRequiredException extends Error {
  constructor() {
    super('Sign in to the dashboard first');
    this.name = 'SignInRequiredException';
  }
}
