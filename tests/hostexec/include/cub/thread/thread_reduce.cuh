// SPDX-License-Identifier: Apache-2.0
// cub::ThreadReduce for host execution (defined with the shared helpers).

#pragma once

#include <cub/hostexec_common.cuh>
