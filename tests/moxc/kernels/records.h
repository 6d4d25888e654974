/* records.h - record types of moxc's test module "demo": shared by the
 * kernels (demo.c) and the host, through the generated bindings. */
#ifndef MOXC_TEST_RECORDS_H
#define MOXC_TEST_RECORDS_H

#include <stdint.h>

typedef struct Vec2 {
    float x;
    float y;
} Vec2;

typedef struct Particle {
    Vec2 pos;
    Vec2 vel;
    float mass;
    uint32_t id;
} Particle;

typedef struct Config {
    float dt;
    uint32_t count;
    uint16_t steps;
    uint8_t flags[2];
} Config;

#endif
