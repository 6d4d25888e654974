/* nbody_port.h - the records the nbody port's kernel and host glue share:
 * a body's position and mass (the original's float4) or velocity, and an
 * acceleration (float3). The dialect's records have 4-byte alignment, so
 * where the original moves a body with one 16-byte load or store the port
 * uses four 4-byte ones. */
#ifndef MOX_WORKLOADS_NBODY_PORT_H
#define MOX_WORKLOADS_NBODY_PORT_H

#define NBODY_BLOCK 256 /* the sample's default blockSize */

typedef struct Body4 {
    float x;
    float y;
    float z;
    float w;
} Body4;

typedef struct Accel3 {
    float x;
    float y;
    float z;
} Accel3;

#endif
