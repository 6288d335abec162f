// Checked MPI calls: a failing call is a broken invariant (RAD_FATAL), reported with MPI's own error text.
#pragma once

#include <mpi.h>

#include <string>

#include "util/error.h"

#define RAD_MPI(call)                                                                  \
  do {                                                                                 \
    const int _rc = (call);                                                            \
    if (_rc != MPI_SUCCESS) {                                                          \
      char _msg[MPI_MAX_ERROR_STRING];                                                 \
      int _len = 0;                                                                    \
      MPI_Error_string(_rc, _msg, &_len);                                              \
      RAD_FATAL(std::string(#call) + " failed: " + std::string(_msg, size_t(_len)));   \
    }                                                                                  \
  } while (0)
