import { useDatabase } from './host-suite';

useDatabase('sqlite');
