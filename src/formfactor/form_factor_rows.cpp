#include "formfactor/form_factor_rows.h"

#include "util/error.h"

namespace rad {

Precision ParsePrecision(const std::string &name) {
  if (name == "double") return Precision::kDouble;
  if (name == "float") return Precision::kFloat;
  throw InputError("--precision must be 'double' or 'float', not '" + name + "'");
}

const char *PrecisionName(Precision precision) { return precision == Precision::kFloat ? "float" : "double"; }

}  // namespace rad
