import { useDatabase } from './host-suite';

useDatabase('postgres');
