/* nbody_port.h - the constant the nbody port's kernel and host glue share:
 * the sample's default block size (the original sizes its shared tile from
 * the launch's block; the port's tile is fixed). */
#ifndef MOX_WORKLOADS_NBODY_PORT_H
#define MOX_WORKLOADS_NBODY_PORT_H

#define NBODY_BLOCK 256 /* the sample's default blockSize */

#endif
